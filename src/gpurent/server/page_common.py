"""What every dashboard page shares: the HTML reply with its security headers, the CSRF token
(double submit: a random HttpOnly SameSite=Strict cookie and the same value in a hidden field of
every form; a POST whose field does not match the cookie is refused with 403), and the form
body reader."""

from __future__ import annotations

import hmac
import secrets
from collections import OrderedDict
from collections.abc import Hashable
from urllib.parse import parse_qs

from fastapi import Request
from fastapi.responses import HTMLResponse

from gpurent.errors import InputError
from gpurent.report.pages import PageInfo, message_page
from gpurent.server.static_files import plotly_version

CSRF_COOKIE = "gpurent_csrf"
CSRF_FIELD = "csrf"
MAX_FORM_FIELDS = 50
# plotly sets style attributes on the elements it draws, hence style-src 'unsafe-inline'; no
# script runs but the app's own files (the figures are JSON, never script)
CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; object-src 'none'; base-uri 'none'; form-action 'self'; "
    "frame-ancestors 'none'"
)
SECURITY_HEADERS = {
    "content-security-policy": CSP,
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "cache-control": "no-store",
}


def _valid_token(text: str | None) -> bool:
    return text is not None and 32 <= len(text) <= 128 and text.isascii()


def csrf_token(request: Request) -> str:
    """The request's CSRF cookie, or a new random token (set by `html_reply`)."""
    given = request.cookies.get(CSRF_COOKIE)
    return given if given is not None and _valid_token(given) else secrets.token_urlsafe(32)


def page_info(request: Request) -> PageInfo:
    """The layout's facts for a page answering `request`."""
    return PageInfo(plotly_version=plotly_version(), csrf_token=csrf_token(request))


def html_reply(body: str, info: PageInfo, status: int = 200) -> HTMLResponse:
    """The page, with the security headers and the CSRF cookie its forms are checked against."""
    reply = HTMLResponse(body, status_code=status, headers=SECURITY_HEADERS)
    reply.set_cookie(
        CSRF_COOKIE, info.csrf_token, httponly=True, samesite="strict", path="/", max_age=86400
    )
    return reply


def csrf_matches(request: Request, form: dict[str, list[str]]) -> bool:
    """True when the form's hidden field carries the value of the request's CSRF cookie."""
    cookie = request.cookies.get(CSRF_COOKIE)
    sent = form.get(CSRF_FIELD, [""])[0]
    if not _valid_token(cookie) or not sent:
        return False
    assert cookie is not None
    return hmac.compare_digest(cookie.encode(), sent.encode())


async def read_form(request: Request) -> dict[str, list[str]]:
    """The urlencoded form body (the guard has already bounded its size)."""
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != "application/x-www-form-urlencoded":
        raise InputError("send the form as application/x-www-form-urlencoded (a browser does)")
    text = (await request.body()).decode("utf-8", errors="replace")
    try:
        return parse_qs(text, keep_blank_values=True, max_num_fields=MAX_FORM_FIELDS)
    except ValueError:
        raise InputError(f"the form has more than {MAX_FORM_FIELDS} fields") from None


async def checked_form(
    request: Request, info: PageInfo, *, active: str, title: str, page_name: str
) -> dict[str, list[str]] | HTMLResponse:
    """A page's submitted form, or the reply that refuses it: 415 when it is not an urlencoded
    form, 403 when its CSRF token does not match this browser's cookie (`page_name`: what to
    reload, in the message)."""
    try:
        raw = await read_form(request)
    except InputError as exc:
        body = message_page(info, active=active, title=title, error=exc.message)
        return html_reply(body, info, status=415)
    if not csrf_matches(request, raw):
        body = message_page(
            info,
            active=active,
            title=title,
            error="the form's CSRF token does not match this browser's cookie (a form from "
            f"another site, or an old page): reload the {page_name} and submit again",
        )
        return html_reply(body, info, status=403)
    return raw


def first(form: dict[str, list[str]], name: str) -> str:
    """The field's first value, stripped ("" when absent)."""
    return form.get(name, [""])[0].strip()


class BodyCache:
    """The last `size` rendered page bodies by key (the inputs a page is a pure function of), so
    that a page asked again with the same inputs is not rendered again (a 100-row table is most
    of a page's time; docs/benchmarks.md). A value may pin objects whose `id` is in its key."""

    def __init__(self, size: int = 128) -> None:
        self._size = size
        self._items: OrderedDict[Hashable, tuple[object, str]] = OrderedDict()

    def get(self, key: Hashable, pinned: object = None) -> str | None:
        """The body stored under `key` (and with the same `pinned` object), or None."""
        hit = self._items.get(key)
        if hit is None or hit[0] is not pinned:
            return None
        self._items.move_to_end(key)
        return hit[1]

    def put(self, key: Hashable, body: str, pinned: object = None) -> str:
        """Store `body` under `key`, dropping the oldest beyond the size; returns `body`."""
        self._items[key] = (pinned, body)
        self._items.move_to_end(key)
        while len(self._items) > self._size:
            self._items.popitem(last=False)
        return body
