#!/usr/bin/env python3
"""SampleTrips from Python: log in, save, fetch with a predicate, subscribe and catch up from history.

Registers nothing: an admin (or the SampleTrips Swift example on the direct store) created the tables.
The password comes from the environment or stdin, never from the command line:

    PGMODEL_PASSWORD=secret python3 examples/python/trips.py --host 127.0.0.1 --port 7432 --user alice
    echo secret | python3 examples/python/trips.py --user alice --password-stdin

Exits 0 when every step saw what it expected, 1 otherwise (CI runs it: ExamplesTests).
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import sys

from pgmodel_client import PGModelClient, PGModelError, decode_value, uuid7


def check(condition: bool, what: str) -> None:
    if not condition:
        print(f"FAILED: {what}", file=sys.stderr)
        sys.exit(1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--host", default=os.environ.get("PGMODEL_HOST", "127.0.0.1"))
    parser.add_argument("--port", type=int, default=int(os.environ.get("PGMODEL_PORT", "7432")))
    parser.add_argument("--user", default=os.environ.get("PGMODEL_USER", "alice"))
    parser.add_argument("--password-stdin", action="store_true", help="read the password from stdin")
    args = parser.parse_args()
    password = sys.stdin.readline().rstrip("\n") if args.password_stdin else os.environ.get("PGMODEL_PASSWORD")
    if not password:
        parser.error("set PGMODEL_PASSWORD or pass --password-stdin")

    # Two connections, as two processes of one user would have: one saves, one watches.
    app = PGModelClient.connect(args.host, args.port)
    watcher = PGModelClient.connect(args.host, args.port)
    try:
        # A wrong password is a typed error, and the connection stays usable.
        try:
            app.login(args.user, password + "-wrong")
            check(False, "a wrong password was accepted")
        except PGModelError as error:
            check(error.code == "authentication_failed", f"wrong password gave {error.code}")
        app.login(args.user, password)
        watcher.login(args.user, password)
        print(f"logged in: {args.user} ({app.user_id})")

        # 1. Subscribe first, then catch up: nothing committed in between can be missed.
        subscription = watcher.subscribe(["Trip", "BusinessTrip"])
        caught_up = watcher.history_after(None)
        token = caught_up.last_token
        print(f"caught up: {len(caught_up.transactions)} earlier transactions")

        # 2. Save two trips in one transaction; dates keep their microseconds.
        tag = str(uuid7())[:8]
        start = dt.datetime(2026, 6, 8, 9, 30, 15, 123456, tzinfo=dt.timezone.utc)
        lisbon, porto = uuid7(), uuid7()
        app.save(inserts=[
            ("Trip", lisbon, {"name": f"{tag} Lisbon", "destination": "Lisbon", "startDate": start,
                              "endDate": start + dt.timedelta(days=4)}),
            ("BusinessTrip", porto, {"name": f"{tag} Porto", "destination": "Porto",
                                     "startDate": start + dt.timedelta(days=10),
                                     "endDate": start + dt.timedelta(days=12), "perdiem": 180.0}),
        ], author="python")
        print("saved: 2 trips")

        # 3. Fetch with a predicate: this run's trips starting on or after `start`, newest first.
        where = {"and": [
            {"startsWith": [{"key": "name"}, {"value": tag}]},
            {"ge": [{"key": "startDate"}, {"value": {"date": start.strftime("%Y-%m-%dT%H:%M:%S.%fZ")}}]},
        ]}
        rows = app.fetch("Trip", where=where, sort=[{"key": "startDate", "order": "reverse"}])
        print("fetched: " + ", ".join(f"{row.values['destination']} ({row.entity})" for row in rows))
        check([row.id for row in rows] == [porto, lisbon], "the fetch did not return both trips, newest first")
        check(rows[1].values["startDate"] == start, "a date lost its microseconds")
        check(rows[0].values["perdiem"] == 180.0, "the business trip's perdiem did not round-trip")
        check(app.count("Trip", where={"is": "BusinessTrip"}) >= 1, "no business trip counted")

        # 4. The watcher's doorbell rings; history says what changed since its token. A `reconnected`
        #    doorbell (the server's listener started) also says "read history", but names no classes:
        #    wait for the `changes` event that names them.
        event = watcher.wait_for_event(60.0)
        while event is not None and event.get("event") == "reconnected":
            event = watcher.wait_for_event(60.0)
        check(event is not None and event.get("subscription") == subscription, "no change event arrived")
        print(f"event: {event['event']} {', '.join(sorted(event.get('entities', []))) or '(any class)'}")
        page = watcher.history_after(token)
        changes = [change for transaction in page.transactions for change in transaction["changes"]]
        inserted = sorted(change["entity"] for change in changes if change["kind"] == "insert")
        print(f"history: {len(page.transactions)} new transactions, inserts of {', '.join(inserted)}")
        check({change["id"] for change in changes} >= {str(lisbon), str(porto)}, "history missed an insert")
        check(all(t["author"] == "python" for t in page.transactions), "history lost the author")
        token = page.last_token

        # 5. An update and a delete; the watcher catches up again from where it stopped.
        app.save(updates=[("BusinessTrip", porto, {"perdiem": 200.5})], deletes=[("Trip", lisbon)], author="python")
        check(watcher.wait_for_event(60.0) is not None, "no event for the second save")
        kinds = sorted(change["kind"] for transaction in watcher.history_after(token).transactions
                       for change in transaction["changes"])
        print(f"history: {', '.join(kinds)}")
        check(kinds == ["delete", "update"], f"expected a delete and an update, saw {kinds}")

        # 6. Two clients edit one trip. Each sends what it had read (the ancestor): the second save of the
        #    same attribute is refused with save_conflict, naming both values; it reads again and retries.
        read = app.fetch("BusinessTrip", where={"eq": [{"key": "name"}, {"value": f"{tag} Porto"}]})[0].values["perdiem"]
        app.save(updates=[("BusinessTrip", porto, {"perdiem": 210.5}, {"perdiem": read})])
        try:
            watcher.save(updates=[("BusinessTrip", porto, {"perdiem": 220.5}, {"perdiem": read})])
            check(False, "a concurrent change of the same attribute was overwritten silently")
        except PGModelError as error:
            check(error.code == "save_conflict", f"a concurrent change gave {error.code}")
            attribute = error.conflicts[0]["attributes"][0]
            check(attribute["name"] == "perdiem" and decode_value(attribute["theirs"]) == 210.5,
                  f"the conflict did not name the stored value: {attribute}")
            print(f"conflict: perdiem mine {decode_value(attribute['mine'])}, theirs {decode_value(attribute['theirs'])}")
            # Keep this client's value, knowing the other's: the stored value is the new ancestor.
            watcher.save(updates=[("BusinessTrip", porto, {"perdiem": 220.5}, {"perdiem": decode_value(attribute["theirs"])})])
        stored = app.fetch("BusinessTrip", where={"eq": [{"key": "name"}, {"value": f"{tag} Porto"}]})[0].values["perdiem"]
        check(stored == 220.5, f"the retried save did not land: {stored}")

        # 7. Bad input is a typed error, never a dropped connection.
        try:
            app.fetch("Trip", where={"gt": [{"key": "nonsense"}, {"value": 1}]})
            check(False, "an unknown attribute was accepted")
        except PGModelError as error:
            check(error.code == "unknown_attribute", f"unknown attribute gave {error.code}")
            # The server's name for the request: quoted in a report, it finds the request's log line.
            check(bool(error.request_id), "the error answer named no request")
        check(app.ping(), "the connection did not survive a bad request")
        print("done")
    finally:
        app.close()
        watcher.close()


if __name__ == "__main__":
    main()
