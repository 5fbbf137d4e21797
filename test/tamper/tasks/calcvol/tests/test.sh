#!/bin/bash
# Writes reward 1 when the tests pass, else 0 (an unfixed calc.py is unresolved, not an error).
cd /app
if python3 /tests/test_calc.py; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
