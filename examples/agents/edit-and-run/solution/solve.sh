#!/bin/sh
cd /app
printf 'print("hello, berth")\n' > greet.py
./record.sh
