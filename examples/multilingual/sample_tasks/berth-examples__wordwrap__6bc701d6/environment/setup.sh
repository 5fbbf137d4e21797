#!/bin/bash
# No dependencies to install: the tests use the standard library of the toolchain.
set -euo pipefail
