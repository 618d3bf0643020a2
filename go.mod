module github.com/askuser-go/askuser

go 1.26

require (
	github.com/coder/websocket v1.8.15
	github.com/google/uuid v1.6.0 // indirect
	github.com/santhosh-tekuri/jsonschema/v5 v5.3.1 // indirect
)
