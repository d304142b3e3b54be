#!/bin/bash
# test_set_rate.sh with the sender under `rlthrottle --seccomp`: the supervisor serves the
# process's page and applies the set at the process's next charge.
UNDER_SECCOMP=1 exec bash "$(dirname "$0")/test_set_rate.sh"
