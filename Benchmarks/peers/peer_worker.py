#!/usr/bin/env python3
"""Entry point of the peer-side processes peers.py starts (see peer_impl.py).

The peer code lives in an imported module, not in __main__, so that huey task
names, APScheduler's pickled function references and procrastinate's App all
resolve to the same importable module (peer_impl) in every process.
"""
import sys

import peer_impl

if __name__ == "__main__":
    sys.exit(peer_impl.main(sys.argv[1:]))
