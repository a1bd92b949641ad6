"""Klondike Race on a real Redis Cluster (KR_REDIS_CLUSTER; tests/service/cluster.py:
three primaries of Debian's redis-server 7 and a replica of one): two nodes sharing it,
races whose rooms land on every shard, events crossing the nodes by sharded pub/sub,
ratings applied in per-slot steps, a quick match across the nodes, daily challenge
attempts (flagged and counted per address, a guests' list where accounts are ranked, in
the challenge's slot), and a primary's failover in the middle of races that lose no
acknowledged move and play on."""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import AsyncIterator

import orjson
import pytest
from websockets.exceptions import ConnectionClosed

from klondike_race.service.clock import Clock
from klondike_race.service.domain import challenge as ch
from klondike_race.service.logs import configure
from klondike_race.service.node import Node
from klondike_race.service.node.node import READY_PROBE_S
from klondike_race.service.store import moves_key, room_key

from .cluster import NODE_TIMEOUT_MS, Cluster
from .conftest import Client, http, make_config, ready_when, winnable
from .test_topology import Racer, until
from .topology import kill_group

# a Redis is killed under the nodes here (conftest.killed_redis_garbage)
pytestmark = pytest.mark.usefixtures("killed_redis_garbage")

SECRET = "cluster-secret"


@pytest.fixture
async def nodes(cluster: Cluster) -> AsyncIterator[list[Node]]:
    """Two nodes on the cluster (emptied first)."""
    configure(json=False, level="warning")
    with cluster.client() as c:
        c.flushall()  # every primary
    config = make_config(
        "",
        redis_cluster=cluster.seeds,
        daily_draws="1",
        challenge_secret=SECRET,
        solver_challenge_s=3.0,
        solver_challenge_tries=5,
        board_interval_ms=50,
    )
    made = [Node(config, ""), Node(config, "")]
    try:
        for node in made:
            node.port = await node.start()  # type: ignore[attr-defined]
        yield made
    finally:
        for node in made:
            await node.stop()


async def hello(port: int) -> tuple[Client, str]:
    c = await Client.open(port)
    got = await c.request("hello", "identity", device=secrets.token_urlsafe(24))
    return c, got["player"]["id"]


async def race_across(first: Node, second: Node, index: int) -> tuple[Client, Client, str]:
    """A race hosted on ``first`` and joined on ``second`` (guests), started. Each
    client's ``who`` is its player key."""
    host, who_host = await hello(first.port)  # type: ignore[attr-defined]
    other, who_other = await hello(second.port)  # type: ignore[attr-defined]
    host.who, other.who = who_host, who_other  # type: ignore[attr-defined]
    deal = {"cards": winnable(index=index % 5)["cards"]}
    welcome = await host.request("create", "welcome", name="host", capacity=2, deal=deal)
    assert welcome["type"] == "welcome", welcome
    code = welcome["room"]["code"]
    assert (await other.request("join", "welcome", code=code, name="p2"))["type"] == "welcome"
    for c in (host, other):
        await c.send("ready")
    for c in (host, other):
        await c.expect("start", timeout=5)
    return host, other, code


async def races_on(
    cluster: Cluster, nodes: list[Node], shards: set[int], least: int = 3
) -> list[tuple[Client, Client, str]]:
    """Races across the two nodes until their rooms are on each primary of ``shards``
    (ports), and at least ``least`` of them."""
    races: list[tuple[Client, Client, str]] = []
    covered: set[int] = set()
    while not (shards <= covered and len(races) >= least):
        assert len(races) < 40, f"rooms landed on {covered} only"
        races.append(await race_across(nodes[0], nodes[1], len(races)))
        covered.add(cluster.owner(room_key(races[-1][2])).port)
    return races


async def test_races_on_every_shard_cross_nodes_and_are_rated(cluster, nodes) -> None:
    began = time.monotonic()
    races = await races_on(cluster, nodes, {p.port for p in cluster.current_primaries()})
    watchers = []
    for _, _, code in races:  # a spectator of each room on the other node
        w = await Client.open(nodes[1].port)  # type: ignore[attr-defined]
        assert (await w.request("watch", "welcome", code=code))["type"] == "welcome"
        watchers.append(w)
    for (host, other, _), w in zip(races, watchers, strict=True):
        for seq in range(1, 4):
            answer = await host.move("draw", seq=seq)
            assert answer["type"] == "ack", answer
        # the host's moves (node 1) reach the other racer and the spectator (node 2)
        for c in (other, w):
            seen = 0
            while seen < 3:
                got = await c.expect("progress", timeout=5)
                seen += got["player"] == host.player
        # both resign: the race finishes on node 2, its ratings are applied
        assert (await other.request("resign", "ack", seq=1))["type"] == "ack"
        assert (await host.request("resign", "ack", seq=4))["type"] == "ack"
        room = await w.expect("room")
        while room["room"]["phase"] != "finished":
            room = await w.expect("room")
    with cluster.client() as rds:
        for host, _, code in races:
            assert rds.llen(moves_key(code, host.player)) == 4  # three draws, a resign
            # the marker is set, then the race leaves rooms:rating (two slots: two steps)
            deadline = time.monotonic() + 10
            while (
                rds.hget(room_key(code), "rated") is None
                or rds.zscore("rooms:rating", code) is not None
                or rds.zscore("rooms:played", code) is not None  # play statistics too
            ):
                assert time.monotonic() < deadline, f"race {code} never rated"
                await asyncio.sleep(0.05)
            assert int(rds.hget(room_key(code), "rated")) == 2
        for c in (c for r in races for c in r[:2]):  # each player's race, once
            who = c.who  # type: ignore[attr-defined]
            assert rds.llen(f"player:{{{who}}}:races") == 1
            assert rds.zcard(f"player:{{{who}}}:applied") == 1
            assert rds.hget(f"player:{{{who}}}:play", "draw1:games") == b"1"  # (its own slot)
            assert rds.zcard(f"player:{{{who}}}:counted") == 1
    # a rerun after a crash before the room's marker (the marker lost) changes nobody twice
    code = races[0][2]
    with cluster.client() as rds:
        rds.hdel(room_key(code), "rated")
        assert await nodes[0].ratings.apply(code)
        assert int(rds.hget(room_key(code), "rated")) == 2
        for c in races[0][:2]:
            assert rds.llen(f"player:{{{c.who}}}:races") == 1  # type: ignore[attr-defined]
    # the statistics pairing goes by, of players in several slots, read together
    whos = [c.who for r in races for c in r[:2]]  # type: ignore[attr-defined]
    together = await nodes[1].store.ratings.variant_stats([*whos, "g-nobody"], "draw1")
    assert together[-1] is None and None not in together[:-1]
    assert together[:-1] == [
        (await nodes[0].store.ratings.variant_stats([w], "draw1"))[0] for w in whos
    ]
    # the lobby reads the public list and every node's count across slots
    looker = await Client.open(nodes[0].port)  # type: ignore[attr-defined]
    lobby = await looker.request("rooms", "rooms")
    assert lobby["type"] == "rooms" and lobby["online"] >= 1, lobby
    # a guest who registers takes their statistics to the account (keys of two slots);
    # the guest's name (their seat's, in their own slot) goes
    host = races[0][0]
    guest_name = f"player:{{{host.who}}}:name"  # type: ignore[attr-defined]
    with cluster.client() as rds:
        assert rds.hget(guest_name, "name") == b"host"
    made = await host.request("register", "identity", name="Clus Ter", password="a password!")
    assert made["type"] == "identity", made
    account = made["player"]["id"]
    with cluster.client() as rds:
        assert rds.hexists(f"player:{{{account}}}:stats", "draw1")
        assert rds.hget(f"player:{{{account}}}:play", "draw1:games") == b"1"
        assert rds.llen(f"player:{{{account}}}:races") == 1
        assert not rds.exists(f"player:{{{host.who}}}:stats")  # type: ignore[attr-defined]
        assert not rds.exists(guest_name)
    signed = await Client.open(nodes[1].port)  # type: ignore[attr-defined]
    back = await signed.request("hello", "identity", session=made["session"])
    assert back["player"]["id"] == account, back
    for c in (*(c for r in races for c in r[:2]), *watchers, looker, signed):
        await c.close()
    print(f"\n{len(races)} races on 3 shards across 2 nodes in {time.monotonic() - began:.1f} s")


async def test_a_quick_match_across_nodes_and_daily_attempts(cluster, nodes) -> None:
    a, _ = await hello(nodes[0].port)  # type: ignore[attr-defined]
    b, _ = await hello(nodes[1].port)  # type: ignore[attr-defined]
    assert (await a.request("quick", "queued", name="ann"))["type"] == "queued"
    welcome_b = await b.request("quick", "welcome", name="bob")
    assert welcome_b["type"] == "welcome" and welcome_b["room"]["quick"]
    welcome_a = await a.expect("welcome")  # the news reached node 1 on its own channel
    assert welcome_a["room"]["code"] == welcome_b["room"]["code"]
    for c, welcome in ((a, welcome_a), (b, welcome_b)):
        if welcome["room"]["phase"] != "racing":  # else its countdown ended before it came
            await c.expect("start")
    assert (await a.move("draw"))["type"] == "ack"
    # daily attempts on both nodes: each move's row on the leaderboard of the challenge
    cid = ch.daily_id(ch.day_of(Clock().now_ms()), 1)
    for node in nodes:
        fresh = await Client.open(node.port)  # type: ignore[attr-defined]
        await fresh.request("hello", "identity", device=secrets.token_urlsafe(24))
        got = await fresh.request("attempt", "welcome", challenge=cid, name="Gus", timeout=60)
        assert got["type"] == "welcome", got
        for seq in (1, 2):
            assert (await fresh.move("draw", seq=seq))["type"] == "ack"
        if node is nodes[1]:  # an attempt that ends: its row says so
            assert (await fresh.request("resign", "ack", seq=3))["type"] == "ack"
            room = (await fresh.expect("room"))["room"]
            while room["phase"] != "finished":
                room = (await fresh.expect("room"))["room"]
        await fresh.close()
    with cluster.client() as rds:
        board = f"ch:{{{cid}}}:0"
        assert rds.zcard(board + ":board") == 2
        rows = [orjson.loads(r) for r in rds.hvals(board + ":rows")]
        assert len(rows) == 2 and rds.hlen(board + ":att") == 2
        assert sorted(r["status"] for r in rows) == ["playing", "resigned"], rows
        # both from 127.0.0.1: the second flagged, counted in the challenge's slot
        assert sorted(r["flags"] for r in rows) == [[], ["address"]], rows
        assert rds.hlen(board + ":addr") == 3 and rds.pttl(board + ":addr") > 0
    for c in (a, b):
        await c.close()


async def test_a_challenge_that_ranks_accounts_on_the_cluster(cluster) -> None:
    """Accounts ranked: a guest's attempt on the guests' list of the challenge's slot,
    through its moves and its end, and the live frames reading both lists there."""
    configure(json=False, level="warning")
    with cluster.client() as c:
        c.flushall()
    config = make_config(
        "",
        redis_cluster=cluster.seeds,
        daily_draws="1",
        challenge_secret=SECRET,
        solver_challenge_s=3.0,
        solver_challenge_tries=5,
        board_interval_ms=50,
        challenge_ranking="accounts",
    )
    node = Node(config, "")
    port = await node.start()
    try:
        cid = ch.daily_id(ch.day_of(Clock().now_ms()), 1)
        gus, _ = await hello(port)
        got = await gus.request("attempt", "welcome", challenge=cid, name="Gus", timeout=60)
        assert got["type"] == "welcome", got
        assert (await gus.move("draw", seq=1))["type"] == "ack"
        board = await gus.request("watch_board", "leaderboard", challenge=cid)
        assert board["ranks"] == "accounts" and board["rows"] == [] and board["guests"] == 1
        assert (await gus.request("resign", "ack", seq=2))["type"] == "ack"
        changes = await gus.expect("leaderboard_changes")
        assert changes["base"] == board["v"] and changes["changed"] == []
        assert [(r["name"], r["status"]) for r in changes["guest_changed"]] == [("Gus", "resigned")]
        with cluster.client() as rds:
            base = f"ch:{{{cid}}}:0"
            assert rds.get(f"ch:{{{cid}}}:ranking") == b"accounts"
            assert rds.zcard(base + ":board") == 0 and rds.zcard(base + ":guests:board") == 1
            (row,) = [orjson.loads(r) for r in rds.hvals(base + ":guests:rows")]
            assert row["status"] == "resigned" and row["name"] == "Gus"
        await gus.close()
    finally:
        await node.stop()


async def test_a_primary_failover_mid_race_loses_no_acknowledged_move(cluster, nodes) -> None:
    replica = cluster.replica_now()
    primary_port = int(replica.info("replication")["master_port"])
    races = await races_on(cluster, nodes, {primary_port}, least=4)
    on_shard = [r for r in races if cluster.owner(room_key(r[2])).port == primary_port]
    racers = [
        Racer(c, nodes[0].port if i == 0 else nodes[1].port)  # type: ignore[attr-defined]
        for r in races
        for i, c in enumerate(r[:2])
    ]
    watcher = await Client.open(nodes[1].port)  # type: ignore[attr-defined]
    watched = on_shard[0][2]
    assert (await watcher.request("watch", "welcome", code=watched))["type"] == "welcome"
    stop = asyncio.Event()
    tasks = [asyncio.create_task(r.run(stop)) for r in racers]
    try:
        await until(lambda: all(len(r.acked) >= 10 for r in racers), "the races", tasks)
        with replica.client() as c:
            c.execute_command("CLUSTER", "FAILOVER")
        failed_over = time.monotonic()
        await asyncio.to_thread(
            _wait, lambda: replica.info("replication")["role"] == "master", "the promotion"
        )
        promoted_in = time.monotonic() - failed_over
        await until(
            lambda: all(r.acks_since(failed_over) >= 5 for r in racers),
            "every racer to play on after the failover",
            tasks,
            timeout=30,
        )
        recovered_in = time.monotonic() - failed_over
        # the spectator on the other node still gets the watched room's moves
        host = next(r for r in racers if r.code == watched)
        since = max(host.acked)
        seen = 0
        deadline = time.monotonic() + 10
        while seen <= since:  # a progress of a move made after this point
            got = await watcher.expect("progress", timeout=max(0.1, deadline - time.monotonic()))
            if got["player"] == host.player:
                seen = got["progress"]["moves"]
        stop.set()
        await asyncio.gather(*tasks)
    finally:
        stop.set()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    assert cluster.owner(room_key(watched)).port == replica.port
    lost = nothing_acknowledged_lost(cluster, racers)
    longest = max(
        (b - a for r in racers for a, b in zip(r.acked_at, r.acked_at[1:], strict=False)),
        default=0.0,
    )
    print(
        f"\n{len(on_shard)} of {len(races)} races on the failed-over shard;"
        f" replica promoted in {promoted_in:.2f} s; every racer playing again"
        f" {recovered_in:.2f} s after CLUSTER FAILOVER; longest gap between a racer's acks"
        f" {longest:.2f} s; lost connections: {lost};"
        f" {sum(len(r.acked) for r in racers)} moves acknowledged"
    )
    for r in racers:
        if r.client is not None:
            await r.client.close()
    await watcher.close()


def nothing_acknowledged_lost(cluster: Cluster, racers: list) -> list[str]:  # type: ignore[type-arg]
    """Every move a racer had acknowledged is in its log, in place; a racer lost only
    its connection (1006, or 1013 while Redis could not take moves), nothing else.
    Returns how connections were lost."""
    with cluster.client() as rds:
        for r in racers:
            log = [e.decode() for e in rds.lrange(moves_key(r.code, r.player), 0, -1)]
            assert len(log) >= max(r.acked)
            for seq, move in r.acked.items():
                assert log[seq - 1].split("@")[0] == move, (r.player, seq)
    lost = sorted({how for r in racers for how in r.lost})
    assert set(lost) <= {"close 1006", "close 1013"}, lost
    return lost


def _wait(check, what: str, timeout: float = 15.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


async def test_a_killed_primary_loses_no_move_acknowledged_by_its_replica(cluster, nodes) -> None:
    """KR_REPLICA_ACKS=1: a move is acknowledged once the replica of its room's primary
    holds it (WAIT on the primary's connection, store/cluster.py). The primary is
    SIGKILLed; the cluster promotes the replica; the old primary, started again, follows
    it, and moves are acknowledged again."""
    replica = cluster.replica_now()
    primary = next(
        p for p in cluster.processes if p.port == int(replica.info("replication")["master_port"])
    )
    races = await races_on(cluster, nodes, {primary.port}, least=1)
    on_shard = [r for r in races if cluster.owner(room_key(r[2])).port == primary.port][:2]
    for r in races:
        if r not in on_shard:
            for c in r[:2]:
                await c.close()
    for node in nodes:
        node.store.replicas = (1, 500)
    racers = [
        Racer(c, nodes[i].port)  # type: ignore[attr-defined]
        for r in on_shard
        for i, c in enumerate(r[:2])
    ]
    stop = asyncio.Event()
    tasks = [asyncio.create_task(r.run(stop)) for r in racers]
    try:
        await until(lambda: all(len(r.acked) >= 10 for r in racers), "the races", tasks)
        kill_group(primary.process)
        killed = time.monotonic()
        await asyncio.to_thread(
            _wait, lambda: replica.info("replication")["role"] == "master", "the promotion"
        )
        promoted_in = time.monotonic() - killed
        primary.start()  # back from its nodes.conf: a replica of the new primary
        await asyncio.to_thread(
            _wait,
            lambda: primary.info("replication").get("master_link_status") == "up",
            "the old primary to follow the new one",
        )
        await until(
            lambda: all(r.acks_since(killed) >= 5 for r in racers),
            "every racer to play on after the failover",
            tasks,
            timeout=30,
        )
        recovered_in = time.monotonic() - killed
        stop.set()
        await asyncio.gather(*tasks)
    finally:
        stop.set()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    lost = nothing_acknowledged_lost(cluster, racers)
    print(
        f"\nprimary SIGKILLed: replica promoted after {promoted_in:.2f} s (cluster-node-timeout"
        f" {NODE_TIMEOUT_MS} ms); every racer playing again {recovered_in:.2f} s after the"
        f" kill (the old primary started again at once and followed it); lost connections:"
        f" {lost}; {sum(len(r.acked) for r in racers)} moves"
        " acknowledged, each held by a replica"
    )
    for r in racers:
        if r.client is not None:
            await r.client.close()


async def test_ratings_steps_repair_a_crash_and_rebase_a_stale_plan(cluster) -> None:
    """store/ratings.py on a cluster, on a race stored by hand: a plan left by a node that
    died after applying one player is finished without applying that player again, and a
    player whose statistics changed since the plan gets an outcome computed again from
    their current ones (no application overwrites another)."""
    from redis.asyncio.cluster import RedisCluster

    from klondike_race.service.store import Store

    client = RedisCluster(host="127.0.0.1", port=cluster.primaries[1].port)
    try:
        await client.flushall()
        store = Store(client, "test")
        code, a, b = "RATEME", "g-ann", "g-bob"

        def settle(room, progress, composites, stored):  # type: ignore[no-untyped-def]
            """Each player's games counted: one more than stored."""
            return [
                (w, {"games": (stored[w] or {"games": 0})["games"] + 1}, {"code": code})
                for w in (a, b)
            ]

        state = {"seats": [["p1", "A", "", False, a], ["p2", "B", "", False, b]]}
        await client.hset(
            room_key(code), mapping={"state": orjson.dumps(state), "status": "finished"}
        )
        stats = {w: f"player:{{{w}}}:stats" for w in (a, b)}
        # a node planned the race on Ann 1 game and Bob none, applied Bob, then died
        plan = {
            "stored": {a: orjson.dumps({"games": 1}).decode(), b: None},
            "outcomes": [[a, {"games": 2}, {"code": code}], [b, {"games": 1}, {"code": code}]],
        }
        await client.hset(room_key(code), "plan", orjson.dumps(plan))
        await client.hset(stats[b], "draw1", orjson.dumps({"games": 1}))
        await client.zadd(f"player:{{{b}}}:applied", {code: 1})
        # meanwhile another race of Ann's was applied: she has 5 games, not 1
        await client.hset(stats[a], "draw1", orjson.dumps({"games": 5}))
        await client.zadd("rooms:rating", {code: 0})
        assert await store.ratings.apply(code, lambda _room: "draw1", settle)
        assert orjson.loads(await client.hget(stats[a], "draw1")) == {"games": 6}
        assert orjson.loads(await client.hget(stats[b], "draw1")) == {"games": 1}  # once
        assert await client.llen(f"player:{{{b}}}:races") == 0  # Bob's entry: not again
        assert await client.llen(f"player:{{{a}}}:races") == 1
        assert await client.zscore("rooms:rating", code) is None
        # applied: a later run (a sweep) changes nothing
        assert not await store.ratings.apply(code, lambda _room: "draw1", settle)
        assert orjson.loads(await client.hget(stats[a], "draw1")) == {"games": 6}
    finally:
        await client.aclose()


async def test_readyz_follows_the_whole_cluster_gone_and_back(cluster, nodes) -> None:
    """Every process of the cluster SIGKILLed: redis-py then fails with
    RedisClusterUnreachableError, which is not a RedisError; the node's readiness probe
    goes on through it (/readyz 503, redis unreachable) and says ready again once the
    cluster is back (it once stopped at that error and left the node unready for good).
    A request that needs Redis meanwhile closes its connection with 1013 (try again
    later), as on one Redis, not 1011 (a server fault)."""
    port = nodes[0].port  # type: ignore[attr-defined]
    assert (await http(port, "GET", "/readyz"))[0] == 200
    player = await Client.open(port)
    for p in cluster.processes:
        kill_group(p.process)
    try:
        _, body = await ready_when(port, lambda status: status == 503)
        assert body.startswith(b"redis unreachable: no answer for "), body
        await player.send("create", name="Ann")
        with pytest.raises(ConnectionClosed) as closed:
            while True:
                assert (await player.recv())["type"] != "welcome"
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1013, closed.value
        await asyncio.sleep(2 * READY_PROBE_S)  # probes that fail the same way
    finally:
        for p in cluster.processes:  # back from their nodes.conf, roles and slots kept
            p.start()
        await asyncio.to_thread(
            _wait,
            lambda: (
                all(p.cluster_info()["cluster_state"] == "ok" for p in cluster.processes)
                and cluster.replica_now().info("replication").get("master_link_status") == "up"
            ),
            "the cluster to be whole again",
            30,
        )
    await ready_when(port, lambda status: status == 200, within=10)
