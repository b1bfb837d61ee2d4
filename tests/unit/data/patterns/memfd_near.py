def my_memfd_create_helper():
    pass
memfd = 3
