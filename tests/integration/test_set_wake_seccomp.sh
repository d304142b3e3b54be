#!/bin/bash
# test_set_wake.sh with the sender under `rlthrottle --seccomp`: the supervisor applies the set
# for the call waiting on its timer and moves the timer.
UNDER_SECCOMP=1 exec bash "$(dirname "$0")/test_set_wake.sh"
