module github.com/askuser-go/askuser

go 1.26

require (
	github.com/coder/websocket v1.8.15
	github.com/google/uuid v1.6.0
	github.com/santhosh-tekuri/jsonschema/v5 v5.3.1
	github.com/stretchr/testify v1.12.1
)

require go.yaml.in/yaml/v3 v3.0.5 // indirect
