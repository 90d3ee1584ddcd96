#include "cmd/cmd.h"
#include "util/util.h"

int cmd_dump(int argc, char **argv)
{
	pr_err("dump: not built yet");
	return 1;
}
