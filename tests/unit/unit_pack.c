/* unit_pack.c - (being written) unit tests of src/pack. */
int main(void) { return 77; }
