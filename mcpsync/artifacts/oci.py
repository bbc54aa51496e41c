"""OCI: resolve the image's tag to its manifest digest over the OCI distribution API.

`GET /v2/<repository>/manifests/<tag>` on the image's own registry (the host in the identifier;
`docker.io` is served by registry-1.docker.io; no host means Docker Hub, one path segment
means `library/`), asking for OCI indexes and manifests and Docker manifest lists and v2
manifests. A 401 with `WWW-Authenticate: Bearer realm=…,service=…,scope=…` is answered the way
docker does for a public image: an anonymous token from the realm, then the request again.
mcpsync hashes the manifest bytes itself (sha256) and, if the registry sends
`Docker-Content-Digest`, refuses an answer whose header disagrees with the bytes. Plain http
is used for localhost and 127.0.0.1, as docker does; every other registry is https.

The launch then runs `image:tag@sha256:…`: docker pulls by digest and checks the bytes. An
identifier that already names `@sha256:…` needs no request; it is recorded as the publisher
declared it.
"""

from __future__ import annotations

import hashlib
import re
import threading
from dataclasses import dataclass
from urllib.parse import quote, urlencode, urlsplit

from mcpsync.artifacts.model import Artifact, Wanted
from mcpsync.artifacts.session import Session, json_of, not_in_store, refused
from mcpsync.errors import ArtifactStoreError
from mcpsync.httpfetch import Reply, Transient

MANIFEST_TYPES = (
    "application/vnd.oci.image.index.v1+json",
    "application/vnd.docker.distribution.manifest.list.v2+json",
    "application/vnd.oci.image.manifest.v1+json",
    "application/vnd.docker.distribution.manifest.v2+json",
)
_DOCKER_HUB = ("docker.io", "index.docker.io", "registry-1.docker.io")
_LOCAL = ("localhost", "127.0.0.1", "::1", "[::1]")
_PARAM = re.compile(r'(\w+)="([^"]*)"')


@dataclass(frozen=True)
class ImageRef:
    host: str  # as written in the identifier ("docker.io" when none)
    repository: str
    tag: str | None
    digest: str | None

    @property
    def base(self) -> str:
        if self.host in _DOCKER_HUB:
            return "https://registry-1.docker.io"
        hostname = self.host.rsplit(":", 1)[0] if not self.host.startswith("[") else self.host
        scheme = "http" if hostname in _LOCAL else "https"
        return f"{scheme}://{self.host}"


def parse_reference(identifier: str, version: str) -> ImageRef:
    """`[host/]path[:tag][@digest]`; the tag defaults to the launch's package version."""
    name, _, digest = identifier.partition("@")
    first, slash, rest = name.partition("/")
    if slash and ("." in first or ":" in first or first == "localhost"):
        host, path = first, rest
    else:
        host, path = "docker.io", name
    tag = None
    last = path.rsplit("/", 1)[-1]
    if ":" in last:
        path, _, tag = path.rpartition(":")
    if host in _DOCKER_HUB and "/" not in path:
        path = f"library/{path}"
    return ImageRef(host, path, tag or (None if digest else version), digest or None)


def lookup(session: Session, wanted: Wanted, abort: threading.Event) -> Artifact:
    ref = parse_reference(wanted.identifier, wanted.version)
    if ref.digest is not None:  # pinned by the publisher: docker checks it when it pulls
        return Artifact(source="publisher-declared", store=ref.base, digest=ref.digest)
    label = f"OCI registry {ref.base}"
    url = f"{ref.base}/v2/{ref.repository}/manifests/{quote(ref.tag or '', safe='')}"
    headers = {"Accept": ", ".join(MANIFEST_TYPES)}
    challenges = _challenges(session)
    known, probing = challenges.enter(ref.base, abort)
    try:
        if known is not None:  # this registry challenged before: ask for a token up front
            headers["Authorization"] = f"Bearer {_token(session, known, ref, label, abort)}"
        reply = session.get(url, abort, label=label, headers=headers, parse=_any)
        if reply.status == 401:
            challenge = reply.headers.get("WWW-Authenticate", "")
            if not _bearer(challenge):
                raise refused(label, reply, url, hint=_PRIVATE)
            challenges.learn(ref.base, challenge)
            headers["Authorization"] = f"Bearer {_token(session, challenge, ref, label, abort)}"
            reply = session.get(url, abort, label=label, headers=headers, parse=_any)
        elif probing:
            challenges.learn(ref.base, None)
    finally:
        if probing:
            challenges.leave(ref.base)
    image = f"image '{ref.repository}:{ref.tag}'"
    if reply.status == 404:
        raise not_in_store(label, image)
    if not 200 <= reply.status < 300:
        raise refused(label, reply, url)
    return Artifact(source="downloaded-and-hashed", store=ref.base, digest=_digest(reply, label))


class _Challenges:
    """What each registry of a run answers an anonymous request with: its Bearer challenge,
    or None when it served the image without one. The first lookup to a registry finds out;
    lookups to it that start meanwhile wait for that answer rather than each being refused
    once: 33 images on one registry, all looked up at once, made 23 extra 401 round trips."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._known: dict[str, str | None] = {}
        self._asking: dict[str, threading.Event] = {}

    def enter(self, base: str, abort: threading.Event) -> tuple[str | None, bool]:
        """(the known challenge, whether this caller is the one to find out and must `learn`
        or `leave`). A prober that failed leaves nothing learnt: the next waiter probes."""
        while True:
            with self._lock:
                if base in self._known:
                    return self._known[base], False
                asking = self._asking.get(base)
                if asking is None:
                    self._asking[base] = threading.Event()
                    return None, True
            while not asking.wait(0.05):
                if abort.is_set():  # the batch was abandoned: no need to wait on
                    return None, False

    def learn(self, base: str, challenge: str | None) -> None:
        """Record the answer and let the waiters go (before the prober's own token request)."""
        with self._lock:
            self._known[base] = challenge
        self.leave(base)

    def leave(self, base: str) -> None:
        with self._lock:
            asking = self._asking.pop(base, None)
        if asking is not None:
            asking.set()


def _challenges(session: Session) -> _Challenges:
    with _cache_lock:
        found = session.cache.get("oci-challenges")
        if not isinstance(found, _Challenges):
            found = session.cache["oci-challenges"] = _Challenges()
        return found


def _any(reply: Reply) -> Reply:
    return reply


def _digest(reply: Reply, label: str) -> str:
    digest = "sha256:" + hashlib.sha256(reply.body).hexdigest()
    declared = reply.headers.get("Docker-Content-Digest", "").strip()
    if declared.startswith("sha256:") and declared != digest:
        raise ArtifactStoreError(
            f"{label} sent a manifest whose bytes hash to {digest}, but declares {declared}"
        )
    return digest


_PRIVATE = "mcpsync reads public images anonymously; for a private image lock with `--no-artifacts`"


def _bearer(challenge: str) -> dict[str, str] | None:
    """The parameters of a `Bearer realm=…` challenge; None for anything else."""
    scheme, _, rest = challenge.strip().partition(" ")
    params = dict(_PARAM.findall(rest))
    if scheme.lower() != "bearer" or urlsplit(params.get("realm", "")).scheme not in (
        "http",
        "https",
    ):
        return None
    return params


def _token(
    session: Session, challenge: str, ref: ImageRef, label: str, abort: threading.Event
) -> str:
    """An anonymous pull token for this repository from the challenge's realm (cached)."""
    params = _bearer(challenge) or {}
    realm, service = params.get("realm", ""), params.get("service", "")
    scope = f"repository:{ref.repository}:pull"
    if params.get("scope", "").startswith(f"repository:{ref.repository}:"):
        scope = params["scope"]
    key = (realm, service, scope)
    with _cache_lock:
        if key in session.tokens:
            return session.tokens[key]
    query = urlencode({k: v for k, v in (("service", service), ("scope", scope)) if v})
    token_label = f"OCI token service {realm}"
    token = session.get(
        f"{realm}?{query}", abort, label=token_label, parse=lambda r: _token_of(r, token_label)
    )
    with _cache_lock:
        session.tokens[key] = token
    return token


_cache_lock = threading.Lock()  # guards session.tokens and the challenges in session.cache


def _token_of(reply: Reply, label: str) -> str:
    if not 200 <= reply.status < 300:
        raise refused(label, reply, label.rsplit(" ", 1)[-1])
    data = json_of(reply)
    token = data.get("token") or data.get("access_token") if isinstance(data, dict) else None
    if not isinstance(token, str) or not token:
        raise Transient("sent no token")
    return token
