"""A plan the API tests share, and requests made to it at once."""

from concurrent.futures import ThreadPoolExecutor
from threading import Barrier

from tests.support.http import http_request

RELEASE = [
    {"key": "schema", "title": "Design the schema"},
    {"key": "api", "title": "API endpoint", "needs": ["schema"]},
    {"key": "ui", "title": "Button", "needs": ["api"]},
    {"key": "docs", "title": "Docs"},
]


def post(client, path, body, **headers):
    return client.post(path, body, content_type="application/json", **headers)


def race(url, token, requests):
    barrier = Barrier(len(requests))

    def one(request):
        method, path, body = request
        barrier.wait(timeout=30)
        return http_request(url, method, path, body, token=token)

    with ThreadPoolExecutor(max_workers=len(requests)) as pool:
        return list(pool.map(one, requests))
