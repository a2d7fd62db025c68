/* noop.c: a static program that does nothing, standing for qsub in bench/run's floor of two process starts. */
int
main(void)
{
	return 0;
}
