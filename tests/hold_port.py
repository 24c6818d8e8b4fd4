#!/usr/bin/env python3
"""Runs a command while this script listens on a TCP port the system
picked, with DCUDA_BOOT_PORT naming that port: the group's process 0
must then say that it cannot listen there (a port another program
holds), in every process, and end. Passes the command's output and
exit status through."""
import os
import socket
import subprocess
import sys

if len(sys.argv) < 2:
    sys.exit("usage: hold_port.py COMMAND [ARG...]")
holder = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
holder.bind(("0.0.0.0", 0))
holder.listen(1)
env = dict(os.environ, DCUDA_BOOT_PORT=str(holder.getsockname()[1]))
print(f"holding port {env['DCUDA_BOOT_PORT']}", flush=True)
sys.exit(subprocess.run(sys.argv[1:], env=env, timeout=60).returncode)
