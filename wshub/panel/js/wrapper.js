/*
 * askuser question panel: shows an agent's ask_user_questions in a browser and sends the
 * person's answer back over a WebSocket; below the questions, the approval stack of the
 * host's tool calls that wait for the person (tool_approval), and their decisions.
 *
 * One script tag, no build step, no dependency, nothing fetched from elsewhere:
 *
 *   <link rel="stylesheet" href="/askuser/panel.css">
 *   <script src="/askuser/panel.js"></script>
 *   <div id="questions"></div>
 *   <script>
 *     const ask = AskUser.connect({url: "/ws?session=42", container: document.getElementById("questions")});
 *     ask.on("tool_result", (data) => console.log(data.content));
 *     ask.send({type: "user_message", data: {text: "hi"}});
 *   </script>
 *
 * The file is in parts, each readable on its own; later parts use earlier ones only through
 * the few names each part's heading lists. The parts are the files of wshub/panel/js,
 * joined in this order (panelParts in wshub/panel.go) inside the one function below, so
 * that they share its scope:
 *
 * @parts
 *
 * Everything the model wrote (questions, headers, labels, descriptions, previews, a tool
 * call's arguments) is put in the page as text: elements are made with createElement and
 * filled with textContent, never innerHTML, so no model content can run script or load
 * anything.
 */
(function (root) {
  "use strict";

  // @code

  root.AskUser = {
    version: "3",
    connect: connect,
    createPanel: createPanel,
    showApproval: showApproval,
    markdown: markdown,
    parse: parseEvent,
    stringify: stringifyEvent
  };
})(typeof window !== "undefined" ? window : this);
