#include "record/record.h"
#include "util/util.h"

int record_instrument(const struct record_opts *opts)
{
	pr_err("record: method not built yet");
	return 1;
}
