"""Sends N distinct one-shot Anthropic requests to a gateway and prints its RSS (scripts/bench-rss)."""
import http.client
import json
import sys
import time


def rss_mb(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS"):
                return int(line.split()[1]) // 1024
    return -1


def main():
    port, n, pid = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    connection = http.client.HTTPConnection("127.0.0.1", port)
    print(f"| requests | RSS (MB) |\n|---|---|\n| 0 | {rss_mb(pid)} |", flush=True)
    start = time.time()
    for i in range(n):
        text = f"one-shot question number {i}: what does the relay do when the upstream stalls? " + "context " * 40
        body = json.dumps({"model": "claude-sonnet-4-5", "max_tokens": 64,
                           "messages": [{"role": "user", "content": text}]})
        connection.request("POST", "/v1/messages", body, {
            "content-type": "application/json", "x-api-key": "sk-bench-rss",
            "anthropic-version": "2023-06-01"})
        response = connection.getresponse()
        response.read()
        if response.status != 200:
            sys.exit(f"request {i} got {response.status}")
        if (i + 1) % 1000 == 0:
            print(f"| {i + 1} | {rss_mb(pid)} |", flush=True)
    time.sleep(3)
    print(f"| {n}, 3 s later | {rss_mb(pid)} | ({time.time() - start:.1f} s)", flush=True)


if __name__ == "__main__":
    main()
