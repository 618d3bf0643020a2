// Package notify reaches a person who is not looking at any of their devices: a
// [Webhook] that an askuser dispatcher calls (as its [Notifier]) when a request
// has waited unseen, posting a signed JSON notice to a URL of the host's (a chat
// bridge, a push service, ntfy, a Slack incoming webhook through a small relay), and the
// [Links] that such a notice carries: signed URLs of a page where the person answers
// that one request, or, for an approval, decides it, without the host's login. The
// pages are served by the WebSocket hub (wshub.Options.Links).
//
//	links := &notify.Links{Secrets: [][]byte{secret}, BaseURL: "https://agent.example.com/askuser/links"}
//	d := askuser.New(hub, &askuser.Options{
//		Notifier: &notify.Webhook{URL: "https://hooks.example.com/askuser", Secret: secret, Links: links},
//	})
//
// docs/NOTIFY.md has the format, the signature and how to check it, the links and their
// lifetime, and recipes.
package notify
