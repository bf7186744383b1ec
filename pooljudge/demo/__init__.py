"""The bundled demo collection (data files) and the script that regenerates them."""
