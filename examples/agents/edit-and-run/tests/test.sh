#!/bin/bash
# Reward 1 when greet.py prints the greeting and record.sh was run after the change.
cd /app
if [ "$(python3 greet.py)" = "hello, berth" ] && grep -q ' hello, berth$' record.log 2>/dev/null; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
