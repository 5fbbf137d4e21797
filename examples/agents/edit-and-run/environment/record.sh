#!/bin/sh
# Records what greet.py prints now, with the time it ran.
cd /app && printf '%s %s\n' "$(date +%s)" "$(python3 greet.py)" > /app/record.log
