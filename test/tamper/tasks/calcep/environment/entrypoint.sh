#!/bin/sh
# The app's start-up hook (migrations, config...), then the container's command.
exec "$@"
