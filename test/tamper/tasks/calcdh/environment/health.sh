#!/bin/sh
# the app is ready when calc imports
cd /app && python3 -c "import calc"
