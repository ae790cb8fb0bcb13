"""Two Ray nodes on this machine, every server bound to 127.0.0.1 (tests/test_batch_ray_cluster.py).

Run as `RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0 python3 ray_two_nodes.py TEMP_DIR`: without that
variable Ray replaces 127.0.0.1 by the machine's interface address, for `ray start` and
`ray.init` alike. On Linux `ray start` then refuses to add a second node, so the nodes are
started here with Ray's own test cluster (`ray.cluster_utils.Cluster`), each a raylet of its own
in a process tree of its own. Prints one JSON line (the GCS address, and per node its id and its
processes' pids), then holds the cluster until stdin closes.

Every agent port is given, never 0: with port 0 the raylet waits a fixed 15 s for the agent to
write its port file and aborts past it, which a loaded machine can exceed.
"""

from __future__ import annotations

import json
import socket
import sys
from typing import Any


def free_ports(count: int) -> list[int]:
    sockets = [socket.socket() for _ in range(count)]
    try:
        for sock in sockets:
            sock.bind(("127.0.0.1", 0))
        return [sock.getsockname()[1] for sock in sockets]
    finally:
        for sock in sockets:
            sock.close()


def node_args(name: str, ports: list[int]) -> dict[str, Any]:
    metrics_agent, metrics_export, agent_listen, runtime_env_agent = ports
    return {
        "num_cpus": 1,
        "resources": {name: 1},
        "object_store_memory": 80 * 1024 * 1024,
        "metrics_agent_port": metrics_agent,
        "metrics_export_port": metrics_export,
        "dashboard_agent_listen_port": agent_listen,
        "runtime_env_agent_port": runtime_env_agent,
    }


def pids(node: Any) -> list[int]:
    return [info.process.pid for infos in node.all_processes.values() for info in infos]


def main() -> None:
    from ray.cluster_utils import Cluster

    temp_dir = sys.argv[1]
    head_port, *ports = free_ports(9)
    head = {
        **node_args("node_a", ports[:4]),
        "gcs_server_port": head_port,
        "include_dashboard": False,
    }
    cluster = Cluster(
        initialize_head=True,
        head_node_args={**head, "temp_dir": temp_dir},
        shutdown_at_exit=True,
    )
    try:
        worker = cluster.add_node(**node_args("node_b", ports[4:]))
        cluster.wait_for_nodes(timeout=120)
        nodes = {"node_a": cluster.head_node, "node_b": worker}
        print(
            json.dumps(
                {
                    "address": cluster.address,
                    "nodes": {
                        name: {"id": node.node_id, "ip": node.node_ip_address, "pids": pids(node)}
                        for name, node in nodes.items()
                    },
                }
            ),
            flush=True,
        )
        sys.stdin.read()  # until the test closes it
    finally:
        cluster.shutdown()


if __name__ == "__main__":
    main()
