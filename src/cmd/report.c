#include "cmd/cmd.h"
#include "util/util.h"

int cmd_report(int argc, char **argv)
{
	pr_err("report: not built yet");
	return 1;
}
