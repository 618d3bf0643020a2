module github.com/askuser-go/askuser/bench

go 1.26

require github.com/askuser-go/askuser v0.0.0-00010101000000-000000000000

require (
	github.com/google/uuid v1.6.0 // indirect
	github.com/santhosh-tekuri/jsonschema/v5 v5.3.1 // indirect
)

replace github.com/askuser-go/askuser => ../
