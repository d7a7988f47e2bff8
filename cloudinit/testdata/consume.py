#!/usr/bin/env python3
"""Consume a user-data file the way cloud-init's init stage does, with cloud-init's own classes.

Usage: consume.py USER_DATA_FILE

Runs cloudinit.user_data.UserDataProcessor over the file, then walks the resulting parts through the default
part handlers of stages.Init._default_handlers (cloud-config, shell script, boot hook, jinja template), as
stages.Init._do_handlers does. Prints JSON: the parts as cloud-init typed and named them, the merged
cloud-config the handlers built (what cloud-init writes to /var/lib/cloud/instance/cloud-config.txt), and the
names of the user scripts in the order cc_scripts_user's runparts runs them (the runcmd script is among them,
as cc_runcmd writes it to the same directory). Used by the Go tests of package cloudinit.
"""
import json
import logging
import os
import sys
import tempfile

from cloudinit import handlers, helpers, user_data
from cloudinit.handlers.boot_hook import BootHookPartHandler
from cloudinit.handlers.cloud_config import CloudConfigPartHandler
from cloudinit.handlers.jinja_template import JinjaTemplatePartHandler
from cloudinit.handlers.shell_script import ShellScriptPartHandler
from cloudinit.settings import PER_INSTANCE


class FakeDatasource:
    def get_instance_id(self):
        return "i-harvester-test"


def main(path):
    # cloud-init's warnings (a part it could not merge, an unhandled type) go to stderr, marked WARNING.
    # cloudinit.log puts a NullHandler on the root logger at import: force replaces it.
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s", force=True)
    with open(path, "rb") as f:
        blob = f.read()
    tmp = tempfile.mkdtemp()
    paths = helpers.Paths(
        {"cloud_dir": os.path.join(tmp, "cloud"), "run_dir": os.path.join(tmp, "run")},
        ds=FakeDatasource(),
    )
    os.makedirs(paths.get_runpath(), exist_ok=True)
    # The jinja handler renders with the instance data cloud-init writes at boot.
    with open(paths.get_runpath("instance_data_sensitive"), "w") as f:
        json.dump({"v1": {"local_hostname": "from-meta-data", "instance_id": "i-harvester-test"}}, f)
    os.makedirs(paths.get_ipath_cur("scripts"), exist_ok=True)

    msg = user_data.UserDataProcessor(paths).process(blob)
    cloud_config = CloudConfigPartHandler(paths=paths)
    shell = ShellScriptPartHandler(paths=paths)
    registry = helpers.ContentHandlers()
    for mod in [
        cloud_config,
        shell,
        BootHookPartHandler(paths=paths, datasource=None),
        JinjaTemplatePartHandler(paths=paths, sub_handlers=[cloud_config, shell]),
    ]:
        registry.register(mod, overwrite=False)
    begun = []
    for _ctype, mod in registry.items():
        if mod not in begun:
            handlers.call_begin(mod, None, PER_INSTANCE)
            begun.append(mod)

    parts = []

    def callback(data, filename, payload, headers):
        parts.append({"type": headers["Content-Type"], "filename": filename})
        handlers.walker_callback(data, filename, payload, headers)

    handlers.walk(
        msg,
        callback,
        {"handlers": registry, "handlerdir": tmp, "data": None, "frequency": PER_INSTANCE,
         "handlercount": 0, "excluded": []},
    )
    merged = cloud_config.cloud_buf
    scripts = sorted(os.listdir(paths.get_ipath_cur("scripts")))
    if merged and "runcmd" in merged:
        scripts = sorted(scripts + ["runcmd"])
    json.dump({"parts": parts, "cloud_config": merged, "scripts": scripts}, sys.stdout, default=str)


if __name__ == "__main__":
    main(sys.argv[1])
