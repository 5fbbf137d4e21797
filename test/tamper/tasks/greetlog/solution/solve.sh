#!/bin/bash
sed -i 's|> /dev/null|>> /var/log/greet.log|' /app/greet.sh
