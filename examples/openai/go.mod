module github.com/askuser-go/askuser/examples/openai

go 1.26.0

replace (
	github.com/askuser-go/askuser => ../../
	github.com/askuser-go/askuser/examples/internal/browsertest => ../internal/browsertest
	github.com/askuser-go/askuser/integrations/askopenai => ../../integrations/askopenai
)

require (
	github.com/askuser-go/askuser v0.0.0-00010101000000-000000000000
	github.com/askuser-go/askuser/examples/internal/browsertest v0.0.0-00010101000000-000000000000
	github.com/askuser-go/askuser/integrations/askopenai v0.0.0-00010101000000-000000000000
	github.com/openai/openai-go/v3 v3.102.0
)

require (
	github.com/chromedp/cdproto v0.160.1 // indirect
	github.com/chromedp/chromedp v0.23.1 // indirect
	github.com/coder/websocket v1.8.15 // indirect
	github.com/go-json-experiment/json v0.0.0-20260213210345-44df1a37e875 // indirect
)

require (
	github.com/google/uuid v1.6.0 // indirect
	github.com/santhosh-tekuri/jsonschema/v5 v5.3.1 // indirect
	github.com/tidwall/gjson v1.20.0 // indirect
	github.com/tidwall/match v1.1.1 // indirect
	github.com/tidwall/pretty v1.2.1 // indirect
	github.com/tidwall/sjson v1.2.5 // indirect
)
