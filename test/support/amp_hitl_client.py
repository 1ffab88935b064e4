"""An AMP client of a crew with a human-input task, written as CrewAI's AMP documentation shows one (the
`requests` library, Bearer tokens, kickoff with webhook URLs and a humanInputWebhook, POST /resume): it receives the
webhooks on a server of its own, sends the first answer back for a revision, approves the revision, and reads the
completed status. It prints what it saw as one JSON object for the test that runs it.

Usage: python3 amp_hitl_client.py BASE_URL TOKEN WEBHOOK_TOKEN FEEDBACK [HOST]
(HOST: the address its webhook server listens on and names, as the crew's controller reaches it; 127.0.0.1 unless given)
"""

import json
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import requests

BASE_URL, TOKEN, WEBHOOK_TOKEN, FEEDBACK = sys.argv[1:5]
HOST = sys.argv[5] if len(sys.argv) > 5 else "127.0.0.1"
HEADERS = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/json"}

received = []
arrived = threading.Condition()


class Receiver(BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        with arrived:
            received.append(
                {
                    "path": self.path,
                    "authorization": self.headers.get("Authorization"),
                    "event": self.headers.get("X-Kubecrew-Event"),
                    "body": json.loads(body),
                }
            )
            arrived.notify_all()
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args):
        pass


class Server(ThreadingHTTPServer):
    address_family = socket.AF_INET6 if ":" in HOST else socket.AF_INET


server = Server((HOST, 0), Receiver)
threading.Thread(target=server.serve_forever, daemon=True).start()
hooks = f"http://{HOST if ':' not in HOST else f'[{HOST}]'}:{server.server_address[1]}"
webhook_urls = {
    "taskWebhookUrl": f"{hooks}/task",
    "crewWebhookUrl": f"{hooks}/crew",
}


report = {}


def wait_for(test, what, timeout=60):
    deadline = time.time() + timeout
    with arrived:
        while True:
            found = [hook for hook in received if test(hook)]
            if found:
                return found[-1]
            if time.time() > deadline:
                raise SystemExit(f"timed out waiting for {what}; saw {json.dumps(report)}; received {received}")
            arrived.wait(0.2)


def status(kickoff_id):
    response = requests.get(f"{BASE_URL}/status/{kickoff_id}", headers=HEADERS, timeout=10)
    response.raise_for_status()
    return response.json()


def resume(kickoff_id, task_id, feedback, approve):
    response = requests.post(
        f"{BASE_URL}/resume",
        headers=HEADERS,
        json={
            "execution_id": kickoff_id,
            "task_id": task_id,
            "human_feedback": feedback,
            "is_approve": approve,
            **webhook_urls,
        },
        timeout=10,
    )
    return {"code": response.status_code, "body": response.json()}


response = requests.post(
    f"{BASE_URL}/kickoff",
    headers=HEADERS,
    json={
        "inputs": {"topic": "tide pools"},
        **webhook_urls,
        "humanInputWebhook": {
            "url": f"{hooks}/hitl",
            "authentication": {"strategy": "bearer", "token": WEBHOOK_TOKEN},
        },
    },
    timeout=10,
)
response.raise_for_status()
kickoff_id = response.json()["kickoff_id"]
report["kickoff_id"] = kickoff_id

# The first answer waits: the human-input webhook names it, /status shows it.
first = wait_for(lambda h: h["path"] == "/hitl", "the human-input webhook")
report["first_wait"] = first
report["status_while_waiting"] = status(kickoff_id)
report["revise"] = resume(kickoff_id, first["body"]["task_id"], FEEDBACK, False)

# The revision comes back for review: approve it.
second = wait_for(lambda h: h["path"] == "/hitl" and h is not first, "the revision's human-input webhook")
report["second_wait"] = second
report["approve"] = resume(kickoff_id, second["body"]["task_id"], "Good. Keep the headline.", True)
report["again"] = resume(kickoff_id, second["body"]["task_id"], "Twice", True)

deadline = time.time() + 60
while True:
    report["final_status"] = status(kickoff_id)
    if report["final_status"]["status"] != "running" or time.time() > deadline:
        break
    time.sleep(0.2)
wait_for(lambda h: h["path"] == "/crew", "the crew webhook")
with arrived:
    report["webhooks"] = list(received)
server.shutdown()
print(json.dumps(report))
