/**
 * A small labelled set for the PII detectors: each text with every piece of personal data a person would mark in it
 * (kind and exact text). Hard negatives (order numbers, versions, timestamps, hashes, numbers that fail a checksum)
 * and known misses (national-format foreign phones, spelled-out addresses, bare nine-digit SSNs) are included on
 * purpose, so the measured numbers are honest. The cards, IBANs and SSNs are published test values.
 */
export interface PiiCase {
  text: string;
  pii: [kind: string, value: string][];
}

export const PII_CASES: PiiCase[] = [
  // e-mail
  { text: 'Contact me at ada.lovelace@example.com please.', pii: [['EMAIL', 'ada.lovelace@example.com']] },
  { text: 'cc: j.doe+billing@mail.corp.example.co.uk, thanks', pii: [['EMAIL', 'j.doe+billing@mail.corp.example.co.uk']] },
  { text: 'Reply to SUPPORT@Example.ORG or to sales_team@example.io.', pii: [['EMAIL', 'SUPPORT@Example.ORG'], ['EMAIL', 'sales_team@example.io']] },
  { text: '<a href="mailto:o.brien@example.ie">write</a>', pii: [['EMAIL', 'o.brien@example.ie']] },
  { text: 'My handle is @ada_l on the forum and my site is example.com.', pii: [] },
  { text: 'write to ada at example dot com', pii: [['EMAIL', 'ada at example dot com']] },
  { text: 'The package is @scope/name@1.2.3 and the git remote is git@github.example:org/repo.git', pii: [] },
  // phone
  { text: 'Call +1 415-555-2671 after 5pm.', pii: [['PHONE', '+1 415-555-2671']] },
  { text: 'Office: (212) 555-0199, mobile 646.555.0133', pii: [['PHONE', '(212) 555-0199'], ['PHONE', '646.555.0133']] },
  { text: 'Berlin office +49 30 901820, Paris +33 1 42 68 53 00', pii: [['PHONE', '+49 30 901820'], ['PHONE', '+33 1 42 68 53 00']] },
  { text: 'UK line: +44 20 7946 0958', pii: [['PHONE', '+44 20 7946 0958']] },
  { text: 'Ring our London desk on 020 7946 0958', pii: [['PHONE', '020 7946 0958']] },
  { text: 'India support +91 98765 43210', pii: [['PHONE', '+91 98765 43210']] },
  { text: 'Order #4471 shipped on 2024-03-05, tracking 1Z999AA10123456784.', pii: [] },
  { text: 'The invoice total is 1,234,567.89 USD, due in 30 days.', pii: [] },
  { text: 'Build 20240305.1 passed 1532 of 1540 tests in 12:30:45.', pii: [] },
  // payment cards
  { text: 'Card: 4111 1111 1111 1111 exp 12/29', pii: [['CREDIT_CARD', '4111 1111 1111 1111']] },
  { text: 'Use 5555-5555-5555-4444 for the test purchase', pii: [['CREDIT_CARD', '5555-5555-5555-4444']] },
  { text: 'Amex 378282246310005 and Discover 6011111111111117', pii: [['CREDIT_CARD', '378282246310005'], ['CREDIT_CARD', '6011111111111117']] },
  { text: 'New Mastercard range: 2223003122003222', pii: [['CREDIT_CARD', '2223003122003222']] },
  { text: 'JCB 3530 1113 3330 0000, Diners 3056 930902 5904', pii: [['CREDIT_CARD', '3530 1113 3330 0000'], ['CREDIT_CARD', '3056 930902 5904']] },
  { text: 'The card 4111 1111 1111 1112 was declined (typo).', pii: [] },
  { text: 'Reference 1234567812345670 is an internal ledger id.', pii: [] },
  { text: 'ISBN 978-0-306-40615-7 and EAN 4006381333931', pii: [] },
  // US SSN
  { text: 'SSN 536-22-1234 on the W-2', pii: [['US_SSN', '536-22-1234']] },
  { text: 'her social security number is 219 09 9998.', pii: [['US_SSN', '219 09 9998']] },
  { text: 'SSN: 123456789', pii: [['US_SSN', '123456789']] },
  { text: 'Employee id 123456789 joined in March.', pii: [] },
  { text: 'The sample card number 078-05-1120 is void, as is 000-12-3456 and 666-12-3456.', pii: [] },
  { text: 'Part no. 912-34-5678 is back-ordered.', pii: [] },
  { text: 'my ss number 321 54 9876 please keep it private', pii: [['US_SSN', '321 54 9876']] },
  // IBAN
  { text: 'Pay to GB82 WEST 1234 5698 7654 32 by Friday.', pii: [['IBAN', 'GB82 WEST 1234 5698 7654 32']] },
  { text: 'IBAN DE89370400440532013000, BIC COBADEFFXXX', pii: [['IBAN', 'DE89370400440532013000']] },
  { text: 'FR14 2004 1010 0505 0001 3M02 606 and NL91ABNA0417164300', pii: [['IBAN', 'FR14 2004 1010 0505 0001 3M02 606'], ['IBAN', 'NL91ABNA0417164300']] },
  { text: 'Spanish account ES91 2100 0418 4502 0005 1332', pii: [['IBAN', 'ES91 2100 0418 4502 0005 1332']] },
  { text: 'Swiss CH93 0076 2011 6238 5295 7 and Belgian BE68 5390 0754 7034', pii: [['IBAN', 'CH93 0076 2011 6238 5295 7'], ['IBAN', 'BE68 5390 0754 7034']] },
  { text: 'The IBAN GB82 WEST 1234 5698 7654 33 failed validation.', pii: [] },
  { text: 'Product code DE12 ABCD 0000 1111 is discontinued.', pii: [] },
  // IP addresses
  { text: 'Login from 203.0.113.45 at 09:14', pii: [['IP_ADDRESS', '203.0.113.45']] },
  { text: 'Blocked 198.51.100.7, 192.168.1.20 and 10.0.0.1.', pii: [['IP_ADDRESS', '198.51.100.7'], ['IP_ADDRESS', '192.168.1.20'], ['IP_ADDRESS', '10.0.0.1']] },
  { text: 'IPv6 client 2001:db8:85a3::8a2e:370:7334 and fe80::1', pii: [['IP_ADDRESS', '2001:db8:85a3::8a2e:370:7334'], ['IP_ADDRESS', 'fe80::1']] },
  { text: 'Upgrade to version 2.10.3.4 of the SDK', pii: [['IP_ADDRESS', '2.10.3.4']] },
  { text: 'Version 1.2.3 ships with std::vector support; the meeting is at 10:30:00.', pii: [] },
  { text: 'Checksum deadbeef:cafe and MAC 00:1A:2B:3C:4D:5E', pii: [] },
  { text: 'Value 256.1.1.1 is not an address, nor is 1.2.3.4.5', pii: [] },
  // mixed
  {
    text: 'Customer Jane (jane.roe@example.net, +1 312-555-0187) paid with 4012 8888 8888 1881 from IBAN IT60 X054 2811 1010 0000 0123 456; SSN 536-22-9876; last IP 198.51.100.23.',
    pii: [
      ['EMAIL', 'jane.roe@example.net'],
      ['PHONE', '+1 312-555-0187'],
      ['CREDIT_CARD', '4012 8888 8888 1881'],
      ['IBAN', 'IT60 X054 2811 1010 0000 0123 456'],
      ['US_SSN', '536-22-9876'],
      ['IP_ADDRESS', '198.51.100.23'],
    ],
  },
  { text: 'Meeting notes: revenue up 12%, 3 new hires, Q3 target 4.5M, see doc 2024/07/15.', pii: [] },
  { text: 'uuid 550e8400-e29b-41d4-a716-446655440000 sha 9f86d081884c7d659a2feaa0c55ad015', pii: [] },
];
