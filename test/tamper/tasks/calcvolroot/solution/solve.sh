#!/bin/bash
set -euo pipefail
sed -i 's/a - b/a + b/' /app/calc.py
echo "solved"
