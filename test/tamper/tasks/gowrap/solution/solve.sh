#!/bin/bash
sed -i 's/"  "/" "/' /app/wrap.go
