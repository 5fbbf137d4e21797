#!/bin/bash
# Runs the script, then reads its log (a scratch place: /var/log). Writes a reward only when the
# greeting is there: no reward file means 0.
bash /app/greet.sh > /dev/null
if grep -qx hello /var/log/greet.log; then
  echo 1 > /logs/verifier/reward.txt
fi
