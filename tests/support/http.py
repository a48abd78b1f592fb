"""One real HTTP request, and its answer."""

import http.client
import json
import urllib.parse


class HttpResponse:
    def __init__(self, status, headers, body):
        self.status = status
        self.headers = headers
        self.body = body

    def json(self):
        return json.loads(self.body)


def http_request(base_url, method, path, body=None, *, token=None, headers=None):
    """One real HTTP request; `body` is sent as JSON unless it is already bytes."""
    url = urllib.parse.urlsplit(base_url)
    connection = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
    headers = dict(headers or {})
    if token:
        headers.setdefault("Authorization", f"Bearer {token}")
    if body is not None and not isinstance(body, bytes):
        body = json.dumps(body).encode()
        headers.setdefault("Content-Type", "application/json")
    try:
        connection.request(method, path, body=body, headers=headers)
        response = connection.getresponse()
        return HttpResponse(response.status, dict(response.getheaders()), response.read())
    finally:
        connection.close()
