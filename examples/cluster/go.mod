module github.com/askuser-go/askuser/examples/cluster

go 1.26.0

replace (
	github.com/askuser-go/askuser => ../..
	github.com/askuser-go/askuser/cluster => ../../cluster
)
