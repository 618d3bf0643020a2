// One device of session 1: the panel, on the example's WebSocket hub.
AskUser.connect({url: "/ws", container: document.getElementById("questions")});
