#!/usr/bin/env python3
"""Load YAML documents with cloud-init's own YAML loader, the one every cloud-config goes through.

Usage: load.py < DOCUMENTS.json

Reads a JSON list of YAML documents on stdin and loads each with cloudinit.safeyaml.load (yaml.load with
PyYAML's SafeLoader, plus the !!python/unicode tag). Prints a JSON list with, for each document, "" when it
loads and otherwise the exception's type and first line. Anything but "" means cloud-init drops the document
(util.load_yaml catches YAML, type and value errors; the cloud-config part handler logs any other and drops the
part). Used by the Go tests of package cloudinit.
"""
import json
import sys

from cloudinit import safeyaml


def load(doc):
    try:
        safeyaml.load(doc)
    except Exception as e:  # ValueError, KeyError, AttributeError, … all drop the document
        return "%s: %s" % (type(e).__name__, (str(e).splitlines() or [""])[0])
    return ""


json.dump([load(d) for d in json.load(sys.stdin)], sys.stdout)
