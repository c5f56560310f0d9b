#!/usr/bin/python3
"""A small window at the screen's top left that drags the files named on its command line as a
file manager does (text/uri-list), for the e2e test of dropping files on Switchboard's window.
Prints "ready" once shown and "drag ended" when a drag is over. Needs python3-gi and GTK 3."""
import sys

import gi

gi.require_version("Gdk", "3.0")
gi.require_version("Gtk", "3.0")
from gi.repository import Gdk, GLib, Gtk  # noqa: E402

uris = [GLib.filename_to_uri(path, None) for path in sys.argv[1:]]
window = Gtk.Window(title="Drag source")
window.set_default_size(80, 50)
window.move(0, 0)
box = Gtk.EventBox()
box.add(Gtk.Label(label="files"))
window.add(box)
box.drag_source_set(Gdk.ModifierType.BUTTON1_MASK, [], Gdk.DragAction.COPY)
box.drag_source_add_uri_targets()
box.connect("drag-data-get", lambda _w, _c, data, _i, _t: data.set_uris(uris))
box.connect("drag-end", lambda *_: print("drag ended", flush=True))
window.connect("destroy", Gtk.main_quit)
window.show_all()
GLib.idle_add(lambda: print("ready", flush=True) and False)
Gtk.main()
