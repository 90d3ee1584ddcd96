# Helpers of the sampling end-to-end scripts (t1xx_sample_*.sh), sourced
# after lib.sh.

# sc_stacks FILE: the recorded call paths, symbolized through the profile's
# calling-context tree, one line per (thread, path, stack state):
# "STATE PID TID COUNT root;...;leaf" (see `stackclock dump --help`).
sc_stacks() { "$STACKCLOCK" dump --stacks -i "$1"; }

# atleast A B: succeeds if the number A >= B.
atleast() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a >= b) }'; }
