#!/usr/bin/env python3
"""mirror-checkout.py DESTINATION - makes DESTINATION hold the checkout's sources as they are now.

Copies every file git tracks or would track (untracked files it does not ignore) from the checkout
this script lives in to DESTINATION, writing only the files whose content differs and removing the
files DESTINATION holds that the checkout no longer has (its .build* folders are left alone). An
unchanged file keeps its modification time, so a SwiftPM scratch path kept beside DESTINATION
builds incrementally from one checkout to the next, whatever folder each checkout is in: SwiftPM
keys what it built by the sources' absolute paths, which a fresh clone elsewhere would change.
Prints how many files it wrote and removed.
"""
import filecmp
import os
import shutil
import subprocess
import sys

if len(sys.argv) != 2:
    sys.exit("usage: mirror-checkout.py DESTINATION")
destination = os.path.abspath(sys.argv[1])
checkout = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=os.path.dirname(os.path.abspath(__file__)),
                          check=True, capture_output=True, text=True).stdout.strip()
listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=checkout,
                        check=True, capture_output=True).stdout.decode().split("\0")
wanted = {path for path in listed if path and os.path.isfile(os.path.join(checkout, path))}

written = 0
for path in sorted(wanted):
    source, target = os.path.join(checkout, path), os.path.join(destination, path)
    if os.path.isfile(target) and filecmp.cmp(source, target, shallow=False):
        continue
    os.makedirs(os.path.dirname(target), exist_ok=True)
    shutil.copy(source, target)  # content and mode; the modification time is now's
    written += 1

removed = 0
for directory, folders, files in os.walk(destination):
    relative = os.path.relpath(directory, destination)
    if relative == ".":
        folders[:] = [folder for folder in folders if not folder.startswith(".build")]
    for name in files:
        path = os.path.normpath(os.path.join(relative, name))
        if path not in wanted:
            os.remove(os.path.join(directory, name))
            removed += 1
print("mirror-checkout: %d files written, %d removed, %d in all, in %s" % (written, removed, len(wanted), destination))
