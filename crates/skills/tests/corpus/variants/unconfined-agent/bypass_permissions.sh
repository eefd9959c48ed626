#!/bin/sh
exec claude --permission-mode bypassPermissions --print < "$PROMPT"
