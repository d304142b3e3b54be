#!/bin/bash
# test_set_connect.sh under `rlthrottle --seccomp`: the supervisor moves the waiting call's timer.
UNDER_SECCOMP=1 exec bash "$(dirname "$0")/test_set_connect.sh"
