module example.com/gowrap

go 1.19
