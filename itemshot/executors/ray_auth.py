"""Token authentication with an existing Ray cluster: present a token when, and only when, the head asks.

Ray 2.60 starts a head (`ray start --head`) with token authentication
whenever a token exists where it starts — `RAY_AUTH_TOKEN`,
`RAY_AUTH_TOKEN_PATH`, or `~/.ray/auth_token`, the file every local
`ray.init()` writes — yet a driver given the head's address connects without
a token unless `RAY_AUTH_MODE=token` is set: it retries for about twenty
seconds, logging a warning a second, then fails with no word of tokens.
Setting token mode whenever a token exists does not do either: a driver in
token mode does reach a head without authentication, but its own server then
turns away the cluster's workers, and the render actors die.

So, before connecting, the driver asks the head's GCS for the cluster's id
once without a token. When the head refuses, the driver switches to token
mode (if it has a token) and asks again. Each failure is one line that says
what to set.
"""

from __future__ import annotations

import contextlib
import os
import socket
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

MODE_ENV = "RAY_AUTH_MODE"
TOKEN_ENV = "RAY_AUTH_TOKEN"
TOKEN_PATH_ENV = "RAY_AUTH_TOKEN_PATH"
# Long enough for a head across a slow network; a head that is down refuses at once.
CONNECT_TIMEOUT_S = 10.0
HINT = (
    f"set {TOKEN_ENV} to the head's token, or {TOKEN_PATH_ENV} to a file holding it "
    "(on the head, `ray get-auth-token` prints it; it is kept in ~/.ray/auth_token there)"
)


class ClusterRefused(RuntimeError):
    """The cluster cannot be used from this driver; the message says why and what to set."""


def default_token_file() -> Path:
    """Return the token file Ray reads when no variable names one (`~/.ray/auth_token`)."""
    return Path.home() / ".ray" / "auth_token"


def token_source(env: Mapping[str, str] | None = None) -> str | None:
    """Return where Ray will read this driver's token from (a variable or a file), or None.

    Ray's order (as Ray 2.60 reads them): `RAY_AUTH_TOKEN` unless empty (a
    blank one is no token, and no other place is read), then the file
    `RAY_AUTH_TOKEN_PATH` names (only that file, when the variable is set),
    then `~/.ray/auth_token`.
    """
    env = os.environ if env is None else env
    if env.get(TOKEN_ENV):
        return TOKEN_ENV if env[TOKEN_ENV].strip() else None
    named = env.get(TOKEN_PATH_ENV)
    if named:
        return f"{TOKEN_PATH_ENV} ({named})" if _holds_text(Path(named)) else None
    default = default_token_file()
    return str(default) if _holds_text(default) else None


def host_and_port(address: str | None) -> tuple[str, int] | None:
    """Return the head's host and port of a `HOST:PORT` address; None for any other form.

    `ray://…` (Ray Client), `auto` and a new local instance are left to Ray.
    """
    if not address or "://" in address or ":" not in address:
        return None
    host, _, port = address.rpartition(":")
    if not port.isdigit():
        return None
    return host.strip("[]"), int(port)


def prepare_driver(address: str | None) -> bool:
    """Match this driver's authentication to the head at `address`; return whether it turned token mode on.

    Call it after importing Ray and before `ray.init`. Raises `ClusterRefused`
    when nothing answers at the address, when the head asks for a token this
    driver does not have, or when it refuses the one it has.
    """
    where = host_and_port(address)
    if where is None or address is None:
        return False
    try:
        socket.create_connection(where, timeout=CONNECT_TIMEOUT_S).close()
    except OSError as error:
        reason = error.strerror or type(error).__name__
        raise ClusterRefused(
            f"nothing answers there ({reason}): is its head running (`ray start --head`)?"
        ) from None
    source = token_source()
    mode = os.environ.get(MODE_ENV)
    if mode is not None:  # the user chose: keep it, and only explain a refusal
        if mode.lower() == "token" and (source is None or not _ray_has_token()):
            raise ClusterRefused(f"{MODE_ENV}=token, but this driver has no token; {HINT}")
        refusal = _ask(address)
        if refusal is None:
            return False
        if mode.lower() != "token" and _is_auth_error(refusal):
            then = f": this driver's token is {source}" if source else f" and {HINT}"
            raise ClusterRefused(
                f"the cluster requires a token, and {MODE_ENV}={mode} turns tokens off here; "
                f"unset it{then}"
            )
        raise ClusterRefused(_refused(refusal, source))
    refusal = _ask(address)
    if refusal is None:
        return False  # no authentication: a token would turn the cluster's workers away
    if not _is_auth_error(refusal) or source is None or not _ray_has_token():
        raise ClusterRefused(_refused(refusal, None))
    _set_token_mode(True)
    refusal = _ask(address)
    if refusal is not None:
        _set_token_mode(False)
        raise ClusterRefused(_refused(refusal, source))
    return True


def restore_driver() -> None:
    """Undo `prepare_driver`'s switch to token mode (after `ray.shutdown`)."""
    _set_token_mode(False)


def _set_token_mode(on: bool) -> None:
    """Switch this process's Ray between token mode and none, as Ray's own setup does."""
    from ray._raylet import AuthenticationTokenLoader, Config

    if on:
        os.environ[MODE_ENV] = "token"
    else:
        os.environ.pop(MODE_ENV, None)
    # Ray reads the mode once into its config; re-read it, then drop the cached token
    # (in this order, as Ray's own tests reset it).
    Config.initialize("")
    AuthenticationTokenLoader.instance().reset_cache()


def _ray_has_token() -> bool:
    """Return whether Ray itself finds a token (token mode without one would abort the process)."""
    from ray._raylet import AuthenticationTokenLoader

    try:
        return bool(AuthenticationTokenLoader.instance().has_token(ignore_auth_mode=True))
    except Exception:  # Ray raises when a named token file is unreadable
        return False


def _ask(address: str) -> Exception | None:
    """Ask the head's GCS for the cluster id once; return the error, or None if it answered."""
    from ray._raylet import GcsClient

    with _quiet_stderr():  # Ray's C++ client logs each refusal itself
        try:
            client: Any = GcsClient(address=address)
        except Exception as error:  # whatever Ray raises is the answer
            return error
    del client
    return None


def _is_auth_error(error: Exception) -> bool:
    from ray.exceptions import AuthenticationError

    return isinstance(error, AuthenticationError)


def _refused(error: Exception, source: str | None) -> str:
    """Return the one line that explains a refusal and what to set."""
    if not _is_auth_error(error):
        text = str(error).strip()
        return text.splitlines()[0] if text else type(error).__name__
    named = os.environ.get(TOKEN_PATH_ENV)
    if source is None and named and not os.environ.get(TOKEN_ENV):
        return (
            f"the cluster requires a token, and {TOKEN_PATH_ENV} names {named}, "
            f"which is missing or empty; {HINT}"
        )
    if source is None:
        return f"the cluster requires a token; {HINT}"
    return f"the cluster refused the token from {source}; {HINT}"


@contextlib.contextmanager
def _quiet_stderr() -> Iterator[None]:
    """Send what is written to file descriptor 2 (Ray's C++ logging) to /dev/null meanwhile."""
    sys.stderr.flush()
    saved = os.dup(2)
    try:
        with open(os.devnull, "wb") as sink:
            os.dup2(sink.fileno(), 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)


def _holds_text(path: Path) -> bool:
    try:
        return bool(path.read_text(encoding="utf-8").strip())
    except (OSError, UnicodeDecodeError):
        return False
