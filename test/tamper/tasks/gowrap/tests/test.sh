#!/bin/bash
# Writes a reward only when the hidden test passes: no reward file means 0.
cd /app
cp /tests/wrap_test.go /app/wrap_test.go
if go test -v ./... > /logs/verifier/test-stdout.txt 2>&1; then
  echo 1 > /logs/verifier/reward.txt
fi
