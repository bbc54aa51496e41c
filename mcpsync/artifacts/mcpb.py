"""mcpb: download the bundle (at most 256 MiB, hashed as it streams, never kept), and refuse it
unless its sha256 is the `fileSha256` the publisher declares in server.json."""

from __future__ import annotations

import threading

from mcpsync.artifacts.model import Artifact, Wanted
from mcpsync.artifacts.session import BUNDLE_MAX, Session, not_in_store, public, refused
from mcpsync.errors import UnsafeData


def lookup(session: Session, wanted: Wanted, abort: threading.Event) -> Artifact:
    url = wanted.identifier
    store = public(url)
    label = f"bundle host {store.split('/', 3)[2] if '//' in store else store}"
    reply, sha = session.download_sha256(url, abort, label=label, max_bytes=BUNDLE_MAX)
    if reply.status == 404:
        raise not_in_store(label, f"bundle {store}")
    if not 200 <= reply.status < 300:
        raise refused(label, reply, url)
    if wanted.file_sha256 and sha != wanted.file_sha256.lower():
        raise UnsafeData(
            f"bundle {store} hashes to sha256 {sha}, but the registry's server.json declares "
            f"fileSha256 {wanted.file_sha256}; refusing it",
            hint="the bundle was replaced or corrupted after publishing; pin another version, "
            "or ask its publisher",
        )
    return Artifact(source="downloaded-and-hashed", store=store, digest=f"sha256:{sha}")
