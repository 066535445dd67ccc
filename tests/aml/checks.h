/* AML's rules, checked through transit_aml (checks.c). */
#ifndef TRANSIT_TESTS_AML_CHECKS_H
#define TRANSIT_TESTS_AML_CHECKS_H
#ifdef __cplusplus
extern "C" {
#endif
/* Before any PE runs aml_checks: mistakes go to a handler of the checks (for the whole process). */
void aml_checks_catch_errors(void);
/* Collective over AML's PEs (after aml_init or transit_aml_attach): every rule; returns the number
 * of failed checks summed over the PEs (each failure printed on stderr by its PE). */
int aml_checks(void);
#ifdef __cplusplus
}
#endif
#endif
