"""Throughput of the generative client against the loopback stand-in with realistic latency.

The stand-in plays the service: each answer takes 2–5 s (uniform), and 10% of
requests fail with 503 "model is overloaded" (after 0.2 s), to be retried with
backoff. Prints images/s and the ratio to the concurrency limit's ideal
(concurrency / mean latency of a successful call).

    python benchmarks/nanobanana_throughput.py --items 200 --concurrency 32
"""

from __future__ import annotations

import argparse
import asyncio
import io
import random
import threading
import time

from PIL import Image

from itemshot.renderer.backends.nanobanana.client import ClientSettings, ImageClient
from itemshot.renderer.backends.nanobanana.prompt import build_request
from itemshot.renderer.backends.nanobanana.standin import (
    Captured,
    Reply,
    StandIn,
    error_reply,
    image_reply,
)
from itemshot.renderer.items import Item
from itemshot.renderer.presentation import Presentation


def main() -> None:
    """Drive the items through the stand-in and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=200)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--low", type=float, default=2.0, help="fastest answer (s)")
    parser.add_argument("--high", type=float, default=5.0, help="slowest answer (s)")
    parser.add_argument("--overload", type=float, default=0.10, help="share of 503 answers")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    buffer = io.BytesIO()
    Image.new("RGB", (1024, 1365), "white").save(buffer, "PNG")
    png = buffer.getvalue()
    rng, lock = random.Random(args.seed), threading.Lock()

    def service(_captured: Captured) -> Reply:
        with lock:
            overloaded = rng.random() < args.overload
            latency = rng.uniform(args.low, args.high)
        if overloaded:
            failed = error_reply(503, "The model is overloaded. Please try again later.")
            return Reply(failed.status, failed.body, delay=0.2)
        ok = image_reply(png)
        return Reply(ok.status, ok.body, delay=latency)

    items = [
        Item(
            id=f"bench-{n}",
            question=f"Question {n}: what is {n} + {n}?",
            options=("1", "2", "3", "4"),
            answer=0,
        )
        for n in range(args.items)
    ]
    with StandIn(service) as server:
        settings = ClientSettings(
            api_base=server.base_url,
            concurrency=args.concurrency,
            requests_per_minute=0,
            backoff_base=0.5,
            backoff_max=4.0,
            max_retries=8,
        )

        async def run() -> tuple[int, str]:
            client = ImageClient(settings, "benchmark-key")
            requests = [
                build_request(i, Presentation(), model=settings.model, seed=1) for i in items
            ]
            outcomes = await asyncio.gather(*(client.generate(r) for r in requests))
            statuses = ", ".join(
                f"{k or 'transport error'}: {v}" for k, v in sorted(client.statuses.items())
            )
            return sum(o.kind == "image" for o in outcomes), f"{client.http_requests} ({statuses})"

        started = time.perf_counter()
        images, requests = asyncio.run(run())
        seconds = time.perf_counter() - started
    mean_latency = (args.low + args.high) / 2
    ideal = args.concurrency / mean_latency
    rate = images / seconds
    print(f"items {args.items}, images {images}, HTTP requests {requests}")
    print(f"wall time {seconds:.1f} s, throughput {rate:.2f} images/s")
    print(
        f"ideal at concurrency {args.concurrency} and mean latency {mean_latency:.1f} s: "
        f"{ideal:.2f} images/s; ratio {rate / ideal:.2f}"
    )


if __name__ == "__main__":
    main()
