#!/bin/bash
# Greets, and should log the greeting to /var/log/greet.log.
echo hello
echo hello > /dev/null
