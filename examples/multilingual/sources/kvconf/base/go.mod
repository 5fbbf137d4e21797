module example.com/kvconf

go 1.19
